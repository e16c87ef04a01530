// Every relative link and anchor in README.md and docs/*.md resolves: the file exists and the
// #anchor is one GitHub makes of a heading in it.
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { anchors, docFiles, links, read, root, slug } from './markdown.js'

t.test('GitHub heading slugs', async (t) => {
  t.equal(slug('Quorum, cluster or Sentinel?'), 'quorum-cluster-or-sentinel')
  t.equal(slug('Which answers count (the vote rule)'), 'which-answers-count-the-vote-rule')
  t.equal(slug('`lockctl run`: what it does'), 'lockctl-run-what-it-does')
  t.equal(slug('Waiting in line — first come, first served'), 'waiting-in-line--first-come-first-served')
  t.same([...anchors('# A\n## A\n```sh\n# not a heading\n```\n### B_c\n')], ['a', 'a-1', 'b_c'])
})

t.test('link extraction skips code and finds inline and reference links', async (t) => {
  const text = 'See [x](a.md#b) and `[y](not-a-link.md)`.\n```md\n[z](in-code.md)\n```\n[ref]: other.md\n'
  t.same(
    links('f.md', text).map((l) => l.target),
    ['a.md#b', 'other.md'],
  )
})

const external = /^[a-z][a-z0-9+.-]*:/i

for (const file of docFiles()) {
  t.test(file, async (t) => {
    const found = links(file, read(file)).filter((l) => !external.test(l.target))
    for (const { line, target } of found) {
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined]
      const resolved = pathPart === '' ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), decodeURI(pathPart))
      const where = `${file}:${line} → ${target}`
      if (!resolved.startsWith(root)) {
        t.fail(`${where}: points outside the repository`)
        continue
      }
      if (!existsSync(resolved)) {
        t.fail(`${where}: ${path.relative(root, resolved)} does not exist`)
        continue
      }
      if (anchor === undefined) continue
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        t.fail(`${where}: an anchor into something that is not a Markdown file`)
        continue
      }
      const targetAnchors = anchors(read(path.relative(root, resolved)))
      t.ok(targetAnchors.has(anchor), `${where}: #${anchor} is a heading of ${path.relative(root, resolved)}`, {
        headings: [...targetAnchors],
      })
    }
    t.pass(`${found.length} relative links checked`)
  })
}
