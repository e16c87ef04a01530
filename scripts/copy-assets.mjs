// Copies the Lua scripts next to the compiled code: dist/lua mirrors src/lua.
import { chmodSync, cpSync } from 'node:fs'
cpSync(new URL('../src/lua', import.meta.url), new URL('../dist/lua', import.meta.url), { recursive: true })
// The package's `bin` (lockctl): executable, so that npm link / npx / ./dist/cli/lockctl.js run it.
chmodSync(new URL('../dist/cli/lockctl.js', import.meta.url), 0o755)
