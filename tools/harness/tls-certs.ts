import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBinary } from './binary';

/** A throwaway CA and a server certificate it signed for 127.0.0.1, as PEM files in a temp folder. */
export class TlsCerts {
  private constructor(
    /** The folder holding the files; removed by `remove`. */
    readonly dir: string,
  ) {}

  /** The CA certificate: what a client must trust (e.g. via `NODE_EXTRA_CA_CERTS`). */
  get caFile(): string {
    return join(this.dir, 'ca.crt');
  }

  /** The server certificate (SAN IP:127.0.0.1, DNS:localhost). */
  get certFile(): string {
    return join(this.dir, 'server.crt');
  }

  /** The server's private key. */
  get keyFile(): string {
    return join(this.dir, 'server.key');
  }

  /** The CA certificate's PEM text, for an in-test client's `tls.ca`. */
  get ca(): string {
    return readFileSync(this.caFile, 'utf8');
  }

  /** Generates a fresh CA and server certificate with `openssl` (RSA 2048, valid one day). */
  static generate(): TlsCerts {
    const openssl = requireBinary('openssl');
    const certs = new TlsCerts(mkdtempSync(join(tmpdir(), 'tls-test-')));
    const d = certs.dir;
    writeFileSync(join(d, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    const steps: string[][] = [
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=test-ca',
        '-keyout',
        join(d, 'ca.key'),
        '-out',
        certs.caFile,
      ],
      [
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        certs.keyFile,
        '-out',
        join(d, 'server.csr'),
      ],
      [
        'x509',
        '-req',
        '-in',
        join(d, 'server.csr'),
        '-CA',
        certs.caFile,
        '-CAkey',
        join(d, 'ca.key'),
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        join(d, 'san.ext'),
        '-out',
        certs.certFile,
      ],
    ];
    for (const args of steps) {
      const r = spawnSync(openssl, args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
    }
    return certs;
  }

  /** Deletes the folder and its keys. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
