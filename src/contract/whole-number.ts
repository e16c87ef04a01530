import { z } from 'zod'
import { wholeNumberPattern } from './patterns.js'

/** A whole number in a query string or an environment variable, within bounds. */
export const wholeNumber = (name: string, min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(wholeNumberPattern, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`))
