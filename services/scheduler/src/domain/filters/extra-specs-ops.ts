type Op = (value: string, operand: string) => boolean;

function numeric(cmp: (a: number, b: number) => boolean): Op {
  return (value, operand) => {
    const a = Number(value);
    const b = Number(operand);
    return value.trim() !== '' && operand.trim() !== '' && !Number.isNaN(a) && !Number.isNaN(b) && cmp(a, b);
  };
}

// NOTE: Nova's table (nova/scheduler/filters/extra_specs_ops.py): "=" means "at least" for numbers.
const OPS: Readonly<Record<string, Op>> = {
  '=': numeric((a, b) => a >= b),
  '==': numeric((a, b) => a === b),
  '!=': numeric((a, b) => a !== b),
  '>=': numeric((a, b) => a >= b),
  '<=': numeric((a, b) => a <= b),
  '<in>': (value, operand) => value.includes(operand),
  's==': (a, b) => a === b,
  's!=': (a, b) => a !== b,
  's<': (a, b) => a < b,
  's<=': (a, b) => a <= b,
  's>': (a, b) => a > b,
  's>=': (a, b) => a >= b,
};

function matchOr(value: string, words: readonly string[]): boolean {
  // "<or> v1 <or> v2 ...": the operands are every other word.
  return words.filter((_, i) => i % 2 === 0).includes(value);
}

/**
 * Nova's `extra_specs_ops.match`: does the host-side `value` satisfy the requirement `req`?
 * `req` is either a plain string (exact match) or "<op> operand", e.g. "= 4", "<in> ssd",
 * "<all-in> a b", "<or> v1 <or> v2", "s>= 2.0". Numeric operators fail on non-numbers.
 */
export function matchExtraSpec(value: string | undefined, req: string): boolean {
  const words = req.split(/\s+/).filter((w) => w !== '');
  const op = words.shift();
  if (op === undefined || (op !== '<or>' && op !== '<all-in>' && OPS[op] === undefined)) return value === req;
  if (value === undefined || words.length === 0) return false;
  if (op === '<or>') return matchOr(value, words);
  if (op === '<all-in>') return words.every((w) => value.includes(w));
  return (OPS[op] as Op)(value, words[0] as string);
}
