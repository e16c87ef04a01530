import { writeFile } from 'node:fs/promises'
import { openapiPath } from '../src/app.js'
import { generateOpenapi } from './openapi.js'

await writeFile(openapiPath, await generateOpenapi())
console.log(`wrote ${openapiPath.pathname}`)
