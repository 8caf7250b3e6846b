import { percent, promNumber } from '../../../charts/generators';

describe('promNumber', () => {
  it('drops float noise from thresholds', () => {
    expect(14.4 * 0.001).not.toBe(0.0144);
    expect(promNumber(14.4 * 0.001)).toBe('0.0144');
    expect(promNumber(1 - 0.999)).toBe('0.001');
    expect(promNumber(1000000)).toBe('1000000');
    expect(promNumber(2)).toBe('2');
  });

  it('refuses what PromQL cannot read', () => {
    expect(() => promNumber(Number.NaN)).toThrow('not a finite number');
  });
});

describe('percent', () => {
  it('writes ratios for people', () => {
    expect(percent(0.05)).toBe('5%');
    expect(percent(0.999)).toBe('99.9%');
    expect(percent(0.0144)).toBe('1.44%');
  });
});
