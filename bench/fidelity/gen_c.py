# bench/fidelity/gen_c.py N: prints the C translation unit that gcc -O2 -c
# compiles in make bench-fidelity (the compiler). N functions, each with the
# things that make an optimising compiler allocate: structs, loops to unroll
# and vectorise, switches, inlinable static helpers, string constants and
# calls between the functions. Deterministic; valid C11 that compiles without
# warnings.
import sys

n = int(sys.argv[1])
out = ["#include <stddef.h>", "#include <string.h>", "",
       "struct rec { int id; double w[8]; char name[32]; struct rec *next; };", ""]
for i in range(n):
    k = i * 2654435761 % 1000
    out.append(f"""static inline int mix{i}(int a, int b) {{ return (a * {k + 3}) ^ (b >> {i % 7 + 1}); }}

int f{i}(struct rec *r, int n, const int *v)
{{
	int acc = {k};
	double s = 0;
	for (int j = 0; j < n; j++) {{
		acc += mix{i}(v[j], j) + (v[j] & {i % 31 + 1});
		s += r->w[j & 7] * (double)v[j] / {i % 13 + 1}.0;
	}}
	switch (acc & 15) {{
	case 0: acc += {k % 97}; break;
	case 1: acc ^= n; break;
	case 2: s *= 1.5; break;
	case 3: acc -= (int)strlen(r->name); break;
	case 5: memcpy(r->name, "f{i}-{k}", sizeof "f{i}-{k}"); break;
	case 7: acc = mix{i}(acc, n); break;
	case 11: if (r->next) acc += r->next->id; break;
	default: acc += (int)s;
	}}
	for (struct rec *p = r; p; p = p->next)
		for (int j = 0; j < 8; j++)
			p->w[j] = p->w[j] * {i % 5 + 1} + acc;
{"	acc += f" + str(i - 1) + "(r, n / 2, v);" if i % 4 else ""}
	return acc + (int)s;
}}
""")
print("\n".join(out))
