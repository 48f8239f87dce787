// Zod building blocks that every format's request schema words alike
// (validation.ts turns their messages into "<param> must be ...").
import { z } from "zod";

const INT32_MAX = 2_147_483_647;

/**
 * An integer that fits the int32 fields of the internal request. The bound
 * comes before the integer check so that 2^53 is told the int32 bound, not the
 * safe-integer one.
 */
export const int32 = () => z.number().max(INT32_MAX).int();

/** An array of at most `max` items (limits.ts). */
export const list = <Item extends z.ZodType>(item: Item, max: number) => z.array(item).max(max);

export const between = (min: number, max: number) => {
  const error = `must be between ${min} and ${max}`;
  return z.number().min(min, error).max(max, error);
};

export const nonEmptyString = z.string().min(1);
