/**
 * The TypeScript client's wire types, generated from openapi.yaml by openapi-typescript and formatted
 * by Prettier: `npm run client-types` writes clients/typescript/src/generated/openapi.ts, and a test
 * (test/clients/typescript.test.ts) fails when the committed file differs from what this generates.
 */
import { readFile, writeFile } from 'node:fs/promises'
import openapiTS, { astToString } from 'openapi-typescript'
import prettier from 'prettier'

export const clientTypesPath = new URL('../clients/typescript/src/generated/openapi.ts', import.meta.url)
const openapiPath = new URL('../openapi.yaml', import.meta.url)

export async function generateClientTypes(): Promise<string> {
  const ast = await openapiTS(await readFile(openapiPath, 'utf8'))
  const header = '// Generated from openapi.yaml by openapi-typescript: do not edit; `npm run client-types` regenerates it.\n'
  const source = header + astToString(ast)
  const options = await prettier.resolveConfig(clientTypesPath)
  return prettier.format(source, { ...options, filepath: clientTypesPath.pathname })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(clientTypesPath, await generateClientTypes())
  console.log(`wrote ${clientTypesPath.pathname}`)
}
