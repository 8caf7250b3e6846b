/**
 * The Redis Cluster hash slot of a key (CRC16-XMODEM of the key, or of its `{hash tag}`, mod
 * 16384), as `CLUSTER KEYSLOT` computes it: to send a command that names no key (WAIT, WAITAOF)
 * to the node that holds a key.
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  let part = key;
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) part = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(part, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
