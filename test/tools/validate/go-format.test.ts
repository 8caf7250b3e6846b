import { goG4, humanize, humanizePercentage, renderAnnotation } from '../../../tools/validate';

describe('Go template formatting, as Prometheus renders annotations', () => {
  it('goG4 is fmt %.4g', () => {
    expect(goG4(0)).toBe('0');
    expect(goG4(50)).toBe('50');
    expect(goG4(52.5)).toBe('52.5');
    expect(goG4(3.9799999999999995)).toBe('3.98');
    expect(goG4(1234567)).toBe('1.235e+06');
    expect(goG4(0.00001234)).toBe('1.234e-05');
    expect(goG4(0.5)).toBe('0.5');
  });

  it('humanize uses SI prefixes', () => {
    expect(humanize(2000000)).toBe('2M');
    expect(humanize(2469134)).toBe('2.469M');
    expect(humanize(35)).toBe('35');
    expect(humanize(0.25)).toBe('250m');
    expect(humanize(0)).toBe('0');
  });

  it('humanizePercentage multiplies by 100', () => {
    expect(humanizePercentage(0.5)).toBe('50%');
    expect(humanizePercentage(0.0525)).toBe('5.25%');
  });

  it('renders labels and values, and refuses templates it cannot predict', () => {
    expect(
      renderAnnotation(
        '{{ $labels.instance }} at {{ $value | humanizePercentage }}',
        { instance: 'backend:8080' },
        0.5,
      ),
    ).toBe('backend:8080 at 50%');
    expect(() => renderAnnotation('{{ $value | humanizeDuration }}', {}, 1)).toThrow('not supported');
    expect(() => renderAnnotation('{{ range . }}', {}, 1)).toThrow('not supported');
  });
});
