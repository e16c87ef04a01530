import t from 'tap'
import { EventStreamParser } from '../../chaos/event-stream-parser.js'

t.test('events split across chunks, with ids, comments, multi-line data and every kind of line break', async (t) => {
  const p = new EventStreamParser()
  t.same(p.push(': keep-alive\nevent: elected\nid: 3.1\nda'), [], 'nothing complete yet')
  t.same(p.push('ta: {"term":3}\n'), [], 'still no blank line')
  t.same(p.push('\nevent: vacant\r\ndata: {"term":3,\r\ndata:"reason":"expired"}\r\n\r\n'), [
    { event: 'elected', data: '{"term":3}', id: '3.1' },
    { event: 'vacant', data: '{"term":3,\n"reason":"expired"}', id: '3.1' },
  ])
  t.same(p.push('data: plain\r\r'), [{ event: 'message', data: 'plain', id: '3.1' }], 'no event field: message; a bare CR ends a line')
  t.same(p.push('\n\n'), [], 'blank lines alone dispatch nothing')
  t.same(p.push('data: split\r'), [], 'a CR at the end of a chunk')
  t.same(p.push('\ndata: more\r\n\r\n'), [{ event: 'message', data: 'split\nmore', id: '3.1' }], 'and its LF in the next: one line break')
})
