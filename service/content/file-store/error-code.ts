/** The error code (`ENOSPC`, `EACCES`, …) or name of a failure: what health shows, never a path. */
export function errorCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code)) return code;
  return e instanceof Error ? e.name : 'Error';
}
