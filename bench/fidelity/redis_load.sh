#!/bin/sh
# bench/fidelity/redis_load.sh PORT REQUESTS: the load generator of make
# bench-fidelity's network server: redis-benchmark against 127.0.0.1:PORT,
# REQUESTS requests in all, split over three value sizes (-d 16, 512 and
# 4096 bytes) so the server's heap sees small, medium and page-sized values;
# each round a mix of SET, GET, LPUSH, LPOP, SADD, HSET, INCR and MSET over a
# random keyspace of 20000 keys (-r), 20 clients, pipelining off. The same
# requests each run except which keys: redis-benchmark seeds its key choice
# from the clock, so the key set (and the final key count) varies a little.
port=${1:?usage: redis_load.sh PORT REQUESTS}
req=${2:?usage: redis_load.sh PORT REQUESTS}
for size in 16 512 4096; do
	redis-benchmark -h 127.0.0.1 -p "$port" -n $((req / 3 / 8)) -c 20 -r 20000 -d $size -q \
		-t set,get,lpush,lpop,sadd,hset,incr,mset >/dev/null || exit 1
done
