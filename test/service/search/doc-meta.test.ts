import type { Item } from '../../../service/content/item';
import { DocMetaColumns } from '../../../service/search/doc-meta';

const item = (id: string, over: Partial<Item> = {}): Item => ({ id, type: 'article', title: 't', body: 'Some **bold** text', tags: ['Red'], created_at: '', updated_at: '', ...over });

describe('DocMetaColumns', () => {
  it('keeps type, lower-cased tags, body and summary per id; replaces and forgets', () => {
    const c = new DocMetaColumns();
    c.set('a', { type: 'project', tags: ['red'], body: 'plain a', summary: 'sa' });
    c.set('b', { type: 'article', tags: [], body: 'plain b', summary: '' });
    expect(c.matches('a', 'project', 'red')).toBe(true);
    expect(c.matches('a', 'article', undefined)).toBe(false);
    expect(c.matches('b', undefined, 'red')).toBe(false);
    expect(c.text('a')).toEqual({ body: 'plain a', summary: 'sa' });
    c.set('a', { type: 'article', tags: [], body: 'new a', summary: '' });
    expect(c.matches('a', 'project', undefined)).toBe(false);
    expect(c.text('a')).toEqual({ body: 'new a', summary: '' });
    expect(c.delete('a')).toBe(true);
    expect(c.delete('a')).toBe(false);
    expect(c.text('a')).toBeUndefined();
    expect(c.matches('a', undefined, undefined)).toBe(false);
    expect(c.size).toBe(1);
  });

  it('reuses a removed slot without mixing documents', () => {
    const c = new DocMetaColumns();
    for (let i = 0; i < 100; i++) c.set(`d${i}`, { type: 'article', tags: [], body: `b${i}`, summary: '' });
    for (let i = 0; i < 100; i += 2) c.delete(`d${i}`);
    for (let i = 0; i < 60; i++) c.set(`e${i}`, { type: 'experience', tags: ['x'], body: `e${i}`, summary: 's' });
    expect(c.size).toBe(110);
    for (let i = 1; i < 100; i += 2) expect(c.text(`d${i}`)).toEqual({ body: `b${i}`, summary: '' });
    for (let i = 0; i < 60; i++) expect([c.matches(`e${i}`, 'experience', 'x'), c.text(`e${i}`)]).toEqual([true, { body: `e${i}`, summary: 's' }]);
  });

  it('reads a restored item at first use and makes its body plain once', () => {
    const c = new DocMetaColumns();
    const it = item('r', { summary: 'sum', type: 'project' });
    c.setRestored(it);
    expect(c.matches('r', 'project', 'red')).toBe(true);
    expect(c.text('r')).toEqual({ body: 'Some bold text', summary: 'sum' });
    c.set('r', { type: 'article', tags: [], body: 'again', summary: '' });
    expect(c.text('r')).toEqual({ body: 'again', summary: '' });
  });
});
