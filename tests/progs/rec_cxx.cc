// rec_cxx — C++ allocation through operator new/delete (plain, array,
// aligned), std::vector growth, std::string and std::map: all of it must
// reach the trace through malloc/free/aligned_alloc.
#include <cstdio>
#include <map>
#include <new>
#include <string>
#include <vector>

struct alignas(64) Wide {
	char c[100];
};

int main()
{
	int *one = new int(42);
	int *arr = new int[100];
	Wide *w = new Wide;
	std::vector<int> v;
	for (int i = 0; i < 1000; i++)
		v.push_back(i);
	std::string s(5000, 'x');
	std::map<int, std::string> m;
	for (int i = 0; i < 100; i++)
		m[i] = std::string(40 + i, 'y');
	long sum = *one + arr[0] * 0 + (long)v.size() + (long)s.size() + (long)m.size() + w->c[0] * 0;
	delete one;
	delete[] arr;
	delete w;
	std::printf("sum %ld\n", sum);
	return 0;
}
