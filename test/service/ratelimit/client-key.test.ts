import { clientId, UNKNOWN_CLIENT } from '../../../service/ratelimit/client-key';

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
