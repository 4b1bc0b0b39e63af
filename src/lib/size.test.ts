import { describe, expect, it } from 'vitest';
import { parseSize } from './size.js';

describe('parseSize', () => {
  it.each([
    ['50MB', 50_000_000],
    ['10MiB', 10 * 1024 * 1024],
    ['500KB', 500_000],
    ['500kb', 500_000],
    ['2 KiB', 2048],
    ['1.5MB', 1_500_000],
    ['1GB', 1_000_000_000],
    ['1048576', 1_048_576],
    ['100B', 100],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  it.each(['', 'MB', 'fifty', '50 megabytes', '-5MB', '5 M B', '0x10', '1e6', '10TB'])('%j is not a size', (text) => {
    expect(parseSize(text)).toBeNull();
  });
});
