import { ServiceProcess } from '../../../tools/harness/service-process';

/** `ServiceProcess` against the real service process. */
describe('ServiceProcess.start', () => {
  it('fails at once, with the output of its run, when the process exits before it is ready', async () => {
    // A setting the service refuses at startup: it exits before it listens. Before, the readiness
    // poll counted the exit as "not yet" and waited out its 60 s limit.
    const start = ServiceProcess.start({
      env: { PATH: process.env.PATH, HOME: process.env.HOME, REQUEST_TIMEOUT_MS: '5' },
    });
    await expect(start).rejects.toThrow(
      /^service exited \(exit \d+\) before it was ready; its last lines:\n.*REQUEST_TIMEOUT_MS/s,
    );
  });
});
