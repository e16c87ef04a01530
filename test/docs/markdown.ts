/**
 * The user-facing Markdown (README.md and docs/*.md) as the doc tests read it: its files, its fenced
 * code blocks, its links and the anchors GitHub makes of its headings.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'

export const root = new URL('../../', import.meta.url).pathname

/** README.md and every .md under docs/ (sub-folders too), as paths relative to the repository root. */
export function docFiles(): string[] {
  const docs = readdirSync(path.join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f.split(path.sep).join('/')}`)
    .sort()
  return ['README.md', ...docs]
}

export const read = (file: string): string => readFileSync(path.join(root, file), 'utf8')

export interface CodeBlock {
  file: string
  /** 1-based line of the opening fence */
  line: number
  lang: string
  code: string
  /** The reason given by a `<!-- not run: REASON -->` line right above the fence, if any. */
  notRun?: string
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->\s*$/

/** Whether a line closes a block opened by `fence`: only fence characters of its kind, at least as many. */
const closes = (line: string, fence: string): boolean => {
  const t = line.trim()
  return t.length >= fence.length && [...t].every((c) => c === fence[0])
}

/** Every fenced code block of a Markdown text. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n')
  const blocks: CodeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!)
    if (!open) continue
    const [, indent, fence, lang] = open
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j]!
      if (closes(line, fence!)) break
      body.push(line.startsWith(indent!) ? line.slice(indent!.length) : line)
    }
    const above = NOT_RUN.exec(lines[i - 1] ?? '')
    blocks.push({ file, line: i + 1, lang: lang!.toLowerCase(), code: body.join('\n'), notRun: above ? above[1] : undefined })
    i = j
  }
  return blocks
}

export const SHELL_LANGS = new Set(['sh', 'bash', 'console', 'shell'])

/** The text outside fenced code blocks (each block's lines blanked, so line numbers stay). */
export function prose(text: string): string {
  const lines = text.split('\n')
  let fence: string | undefined
  return lines
    .map((line) => {
      const open = FENCE.exec(line)
      if (fence === undefined && open) {
        fence = open[2]!
        return ''
      }
      if (fence !== undefined) {
        if (closes(line, fence)) fence = undefined
        return ''
      }
      return line
    })
    .join('\n')
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** Every anchor of a Markdown text (a repeated heading gets -1, -2, … as on GitHub). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of prose(text).split('\n')) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!h) continue
    const base = slug(h[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

export interface Link {
  file: string
  line: number
  target: string
}

/** The Markdown links and images of a text (outside code), with their line numbers. */
export function links(file: string, text: string): Link[] {
  const out: Link[] = []
  prose(text)
    .split('\n')
    .forEach((line, i) => {
      const withoutCode = line.replace(/`[^`]*`/g, '')
      for (const m of withoutCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        out.push({ file, line: i + 1, target: m[1]! })
      }
      const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)
      if (definition) out.push({ file, line: i + 1, target: definition[1]! })
    })
  return out
}
