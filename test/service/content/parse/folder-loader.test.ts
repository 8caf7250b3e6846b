import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFolder } from '../../../../service/content/parse/folder-loader';
import { demoDocuments, loadDemoContent, projectRoot } from '../../../../service/demo/demo-content';
import { parseArgs } from '../../../../scripts/ingest';

describe('loadFolder', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'folder-loader-'));
    mkdirSync(join(dir, 'notes', 'deep'), { recursive: true });
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'notes', 'one.md'), '---\ntitle: One\n---\nFirst.\n');
    writeFileSync(join(dir, 'notes', 'deep', 'two.md'), '---\nid: my-own-id\ntitle: Two\n---\nSecond.\n');
    writeFileSync(
      join(dir, 'list.json'),
      JSON.stringify([
        { type: 'project', title: 'A' },
        { type: 'project', title: 'B' },
      ]),
    );
    writeFileSync(join(dir, 'plain.txt'), 'Plain title\n\nplain body');
    writeFileSync(join(dir, 'broken.json'), '{ nope');
    writeFileSync(join(dir, 'image.png'), 'not content');
    writeFileSync(join(dir, '.git', 'HEAD.md'), '# not content');
    writeFileSync(join(dir, 'guide.md'), '# Guide\n\nIntro.\n\n## Install it\n\nSteps.\n\n## Use it\n\nMore.\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads every supported file (dot-folders skipped) with stable ids from the path unless the item names one', () => {
    const load = loadFolder(dir);
    expect(load.files).toBe(6);
    expect(load.failed).toEqual([{ file: 'broken.json', reason: expect.any(String) }]);
    const ids = load.items.map((i) => i.item.id);
    expect(ids).toEqual(expect.arrayContaining(['notes-one', 'my-own-id', 'list-1', 'list-2', 'plain', 'guide']));
    // The same folder loads to the same ids: a re-run replaces, never duplicates.
    expect(loadFolder(dir).items.map((i) => i.item.id)).toEqual(ids);
  });

  it('splits Markdown into one item per ## section with URLs to the anchors when asked', () => {
    const guide = loadFolder(dir, { sections: true, files: ['guide.md'] }).items.map((i) => i.item);
    expect(guide.map((g) => g.url)).toEqual(['/guide.md', '/guide.md#install-it', '/guide.md#use-it']);
    expect(guide.map((g) => g.title)).toEqual(['Guide', 'Guide: Install it', 'Guide: Use it']);
  });

  it('is the loader of both the demo and `npm run ingest -- DIR --sections`', () => {
    const root = projectRoot();
    const viaLoader = loadFolder(root, { files: demoDocuments(root), sections: true }).items.map((i) => i.item.id);
    expect(loadDemoContent(root).map((i) => i.id)).toEqual(viaLoader);
    expect(parseArgs(['docs', '--sections'])).toMatchObject({ dir: 'docs', sections: true });
  });
});
