// bench/fidelity/node_churn.js N: a JavaScript engine on malloc. N updates
// of a Map of 50 000 keys whose values are small objects holding a string
// and an array; V8 keeps the objects in its own heap, and what reaches
// malloc is the engine's own (parser, compiler zones, GC bookkeeping on its
// helper threads). Prints a checksum.
const n = Number(process.argv[2] || 3000000);
const m = new Map();
let s = 0;
for (let i = 0; i < n; i++) {
	m.set(i % 50000, { a: 'x'.repeat(i % 40), b: [i, i + 1] });
	s += m.size;
}
console.log(s);
