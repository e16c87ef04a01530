// tap runs the tests' TypeScript through ts-node, transpile-only (tsc type-checks everything first). This module
// makes ts-node transpile with esbuild, as tsx does for the service and lockctl, instead of TypeScript's
// transpileModule: ~1.8 s less CPU for each test file that imports the app. tsconfig.tap.json selects it.
/* global require, exports */ // CommonJS: ts-node require()s a transpiler module.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { transformSync } = require('esbuild')

exports.create = () => ({
  transpile(input, { fileName }) {
    const { code, map } = transformSync(input, {
      loader: 'ts',
      format: 'esm',
      target: 'es2022',
      sourcefile: fileName,
      sourcemap: 'external',
      tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
    })
    return { outputText: code, sourceMapText: map }
  },
})
