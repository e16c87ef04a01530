// Copies the Lua scripts next to the compiled code: dist/lua mirrors src/lua.
import { cpSync } from 'node:fs'
cpSync(new URL('../src/lua', import.meta.url), new URL('../dist/lua', import.meta.url), { recursive: true })
