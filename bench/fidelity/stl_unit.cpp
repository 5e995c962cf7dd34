// stl_unit.cpp -- the input of bench-fidelity's clang program: a C++
// translation unit that includes the common standard-library headers and
// instantiates their containers with several types, so that clang++ -O2
// spends its time the way C++ builds do (parsing headers, instantiating
// templates, optimising the result) with LLVM's own allocation pattern
// (operator new per AST node, per IR value). About a second of CPU here.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

template <typename K, typename V> struct Cache {
	std::unordered_map<K, V> items;
	std::vector<K> order;
	void put(const K &k, const V &v)
	{
		if (!items.count(k))
			order.push_back(k);
		items[k] = v;
	}
	V get(const K &k) const
	{
		auto it = items.find(k);
		return it == items.end() ? V() : it->second;
	}
};

#define WORK(N)                                                                  \
	int work##N(int x)                                                       \
	{                                                                        \
		Cache<std::string, std::vector<int>> c;                          \
		std::ostringstream o;                                            \
		o << x << N;                                                     \
		c.put(o.str(), {x, N});                                          \
		std::set<int> s;                                                 \
		for (int i = 0; i < x; i++)                                      \
			s.insert(i * N % 7);                                     \
		std::map<int, std::string> m;                                    \
		m[x] = o.str();                                                  \
		return (int)s.size() + (int)c.get(o.str()).size() + (int)m.size(); \
	}
WORK(1) WORK(2) WORK(3)

int main()
{
	std::vector<std::function<int(int)>> fs = {work1, work2, work3};
	int sum = 0;
	for (auto &f : fs)
		sum += f(10);
	std::cout << sum << "\n";
	return 0;
}
