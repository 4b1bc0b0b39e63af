import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createIO } from './io.js';
import { printTable, terminalWidths, type Column } from './output.js';

const { of: displayWidth, cut: truncate } = await terminalWidths();

describe('terminal widths', () => {
  it('counts the columns a terminal gives: wide scripts and emoji two, marks and colour codes none', () => {
    expect(displayWidth('orders@example.test')).toBe(19);
    expect(displayWidth('注文が発送されました')).toBe(20);
    expect(displayWidth('🚀 ✅ ⭐')).toBe(8);
    // An emoji sequence is one picture: a family joined with ZWJs, a skin tone, a flag, a keycap.
    for (const emoji of ['👨‍👩‍👧', '👍🏽', '🇫🇷', '1️⃣', '❤️']) expect(displayWidth(emoji), emoji).toBe(2);
    expect(displayWidth('e\u0301te\u0301')).toBe(3);
    expect(displayWidth('a\u200Bb')).toBe(2);
    expect(displayWidth('\u001b[1mbold\u001b[22m')).toBe(4);
  });

  it('cuts to the width with an ellipsis, never inside what shows as one character', () => {
    expect(truncate('short', 10)).toBe('short');
    expect(truncate('Your order has shipped', 10)).toBe('Your orde…');
    expect(displayWidth(truncate('注文が発送されました', 7))).toBeLessThanOrEqual(7);
    expect(truncate('注文が発送されました', 7)).toBe('注文が…');
    expect(truncate('ab👨‍👩‍👧cd', 4)).toBe('ab…');
    expect(truncate('ab👨‍👩‍👧cd', 5)).toBe('ab👨‍👩‍👧…');
    expect(truncate('e\u0301e\u0301e\u0301e\u0301', 3)).toBe('e\u0301e\u0301…');
  });
});

describe('printTable', () => {
  /** A table printed to a terminal `columns` wide, without colour; its lines. */
  async function table<T>(rows: T[], columns: Column<T>[], width: number): Promise<string[]> {
    const stdout = new PassThrough();
    let text = '';
    stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
    const io = await createIO({
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
      env: { NO_COLOR: '1' },
      stdinIsTTY: false,
      stdoutIsTTY: true,
      stderrIsTTY: false,
      columns: width,
    });
    await printTable(io, rows, columns);
    return text.trimEnd().split('\n');
  }

  it('fits wide characters and emoji to the terminal, the id whole', async () => {
    const rows = [
      {
        id: 'eml_0123456789abcdefghijklmn',
        subject: '🚀 注文が発送されました — お届けは明日です ✅',
        to: '山田太郎 <taro@example.jp>',
      },
      { id: 'eml_abcdefghijklmn0123456789', subject: 'Your order has shipped', to: 'ada@example.org' },
    ];
    const columns: Column<(typeof rows)[number]>[] = [
      { header: 'ID', value: (r) => r.id, id: true },
      { header: 'TO', value: (r) => r.to },
      { header: 'SUBJECT', value: (r) => r.subject },
    ];
    const lines = await table(rows, columns, 60);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^eml_0123456789abcdefghijklmn {2}/);
    expect(lines[1]).toContain('…');
    // Whole values when they fit: the same table on a wide terminal is not cut.
    const wide = await table(rows, columns, 200);
    expect(wide[1]).toContain(rows[0]!.subject);
    expect(wide.join('\n')).not.toContain('…');
  });
});
