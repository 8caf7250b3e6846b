import fc from 'fast-check';
import {
  clientId,
  MAX_ADDRESS_LENGTH,
  normalizeAddress,
  parseIpv6,
  UNKNOWN_CLIENT,
} from '../../../service/ratelimit/client-key';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

describe('clientId', () => {
  it('keys IPv4 by the address', () => {
    expect(clientId('203.0.113.7', 64)).toBe('203.0.113.7');
  });

  it('keys an IPv4-mapped IPv6 address by its IPv4 form', () => {
    expect(clientId('::ffff:203.0.113.7', 64)).toBe('203.0.113.7');
    expect(clientId('::FFFF:203.0.113.7', 64)).toBe('203.0.113.7');
    expect(clientId('0:0:0:0:0:ffff:cb00:7107', 64)).toBe('203.0.113.7');
  });

  it('keys IPv6 by its /64, so addresses inside one prefix share a key', () => {
    const a = clientId('2001:db8:1:2:aaaa:bbbb:cccc:dddd', 64);
    expect(a).toBe('2001:db8:1:2::/64');
    expect(clientId('2001:db8:1:2::1', 64)).toBe(a);
    expect(clientId('2001:0db8:0001:0002:ffff:ffff:ffff:ffff', 64)).toBe(a);
    expect(clientId('2001:db8:1:3::1', 64)).not.toBe(a);
  });

  it('honours the configured prefix length', () => {
    expect(clientId('2001:db8:1:2::1', 48)).toBe('2001:db8:1::/48');
    expect(clientId('2001:db8:1:2::1', 56)).toBe('2001:db8:1::/56');
    expect(clientId('2001:db8:1:2ff::1', 56)).toBe('2001:db8:1:200::/56');
    expect(clientId('2001:db8::1', 128)).toBe('2001:db8::1/128');
    expect(clientId('::1', 64)).toBe('::/64');
  });

  it('drops a zone index', () => {
    expect(clientId('fe80::1%eth0', 64)).toBe('fe80::/64');
  });

  it('gives unknown addresses one shared id', () => {
    expect(clientId(undefined, 64)).toBe(UNKNOWN_CLIENT);
    expect(clientId('', 64)).toBe(UNKNOWN_CLIENT);
  });
});

describe('clientId with forwarded addresses (TRUST_PROXY on)', () => {
  const SOCKET = '10.0.0.9';

  it('strips a port from IPv4 and bracketed IPv6, so one client has one key on every port', () => {
    expect(clientId('1.2.3.4:5678', 64, SOCKET)).toBe('1.2.3.4');
    expect(clientId('1.2.3.4:1', 64, SOCKET)).toBe(clientId('1.2.3.4:65535', 64, SOCKET));
    expect(clientId('[::1]:80', 128, SOCKET)).toBe('::1/128');
    expect(clientId('[2001:db8::1]:443', 64, SOCKET)).toBe('2001:db8::/64');
    expect(clientId('[2001:db8::1]', 64, SOCKET)).toBe('2001:db8::/64');
    expect(clientId('[::ffff:1.2.3.4]:8080', 64, SOCKET)).toBe('1.2.3.4');
  });

  it('normalizes IPv4-mapped IPv6 and writes IPv6 in one canonical form', () => {
    expect(clientId('::ffff:1.2.3.4', 64, SOCKET)).toBe('1.2.3.4');
    expect(clientId('::FFFF:0102:0304', 64, SOCKET)).toBe('1.2.3.4');
    expect(clientId('2001:DB8:0:0:0:0:0:1', 128, SOCKET)).toBe('2001:db8::1/128');
    expect(clientId('2001:0db8::0001', 128, SOCKET)).toBe('2001:db8::1/128');
  });

  it('falls back to the socket address for what is not an IP address', () => {
    for (const bad of [
      'garbage',
      'unknown',
      'example.com',
      '1.2.3',
      '1.2.3.4.5',
      '256.1.1.1',
      '01.2.3.4',
      '0x7f.0.0.1',
      '1.2.3.4:123456',
      '1::2::3',
      '[1.2.3.4]',
      ' 1.2.3.4',
      '1.2.3.4, 5.6.7.8',
    ]) {
      expect([bad, clientId(bad, 64, SOCKET)]).toEqual([bad, SOCKET]);
    }
  });

  it('refuses 8 KB values without parsing them: the key is the socket address, never the text', () => {
    const huge = 'g'.repeat(8192);
    expect(clientId(huge, 64, SOCKET)).toBe(SOCKET);
    expect(clientId(`1.2.3.4${' '.repeat(8192)}`, 64, SOCKET)).toBe(SOCKET);
    expect(clientId(`2001:db8::1%${'e'.repeat(8192)}`, 64, SOCKET)).toBe(SOCKET);
    expect(clientId('a'.repeat(MAX_ADDRESS_LENGTH + 1), 64, SOCKET)).toBe(SOCKET);
  });

  it('normalizes the socket address too, and falls back to the shared unknown id when neither is an address', () => {
    expect(clientId('garbage', 64, '::ffff:10.0.0.9')).toBe('10.0.0.9');
    expect(clientId('garbage', 64, '2001:db8:1:2::7')).toBe('2001:db8:1:2::/64');
    expect(clientId('garbage', 64, undefined)).toBe(UNKNOWN_CLIENT);
    expect(clientId('garbage', 64, 'garbage')).toBe(UNKNOWN_CLIENT);
  });

  it('every key it returns is short, whatever the input', () => {
    const inputs = [
      '1.2.3.4:5',
      '[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535',
      'fe80::1%eth0',
      'x'.repeat(8192),
    ];
    for (const input of inputs) expect(clientId(input, 128, SOCKET).length).toBeLessThanOrEqual(43);
  });
});

describe('normalizeAddress', () => {
  it('returns undefined for anything but an address', () => {
    expect(normalizeAddress('', 64)).toBeUndefined();
    expect(normalizeAddress('localhost', 64)).toBeUndefined();
    expect(normalizeAddress('198.51.100.7', 64)).toBe('198.51.100.7');
  });
});

describe('normalizeAddress fast paths (IPv4-mapped read directly, IPv6 ids cached)', () => {
  const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));

  /** What ipaddr.js says, uncached: the way normalizeAddress read every non-IPv4 text before the fast paths. */
  const byIpaddr = parseIpv6;

  it(
    'an IPv4-mapped address is its IPv4 form, in any case, exactly as ipaddr.js reads it',
    () => {
      fc.assert(
        fc.property(ipv4, fc.constantFrom('::ffff:', '::FFFF:', '::Ffff:'), (v4, head) => {
          expect(normalizeAddress(head + v4, 64)).toBe(v4);
          expect(normalizeAddress(head + v4, 64)).toBe(byIpaddr(head + v4, 64));
        }),
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('mapped forms the fast path does not take still go through ipaddr.js', () => {
    expect(normalizeAddress('::ffff:7f00:1', 64)).toBe('127.0.0.1');
    expect(normalizeAddress('0:0:0:0:0:ffff:203.0.113.7', 64)).toBe('203.0.113.7');
    expect(normalizeAddress('[::ffff:203.0.113.7]:443', 64)).toBe('203.0.113.7');
    expect(normalizeAddress('::ffff:203.0.113.7:443', 64)).toBeUndefined();
    expect(normalizeAddress('::ffff:010.0.0.1', 64)).toBe(byIpaddr('::ffff:010.0.0.1', 64));
  });

  it(
    'IPv6 ids are the same asked once or many times, per prefix length, valid or not',
    () => {
      const v6 = fc
        .array(fc.nat(0xffff), { minLength: 8, maxLength: 8 })
        .map((w) => w.map((x) => x.toString(16)).join(':'));
      fc.assert(
        fc.property(v6, fc.constantFrom(48, 56, 64, 128), fc.nat(3), (addr, prefix, repeats) => {
          const want = byIpaddr(addr, prefix);
          for (let i = 0; i <= repeats; i++) expect(normalizeAddress(addr, prefix)).toBe(want);
          expect(normalizeAddress(`[${addr}]:80`, prefix)).toBe(want);
        }),
      );
      for (let i = 0; i < 3; i++) expect(normalizeAddress('not:an:address', 64)).toBeUndefined();
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('stays right past the cache bound (20,000 distinct addresses, then the first again)', () => {
    const first = normalizeAddress('2001:db8:0:1::1', 64);
    for (let i = 0; i < 20_000; i++)
      normalizeAddress(`2001:db8:${(i >> 8).toString(16)}:${(i & 255).toString(16)}::1`, 64);
    expect(normalizeAddress('2001:db8:0:1::1', 64)).toBe(first);
    expect(first).toBe('2001:db8:0:1::/64');
  });
});
