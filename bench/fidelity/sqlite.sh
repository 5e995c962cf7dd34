#!/bin/sh
# bench/fidelity/sqlite.sh ROWS: prints the SQL script the sqlite3 CLI runs in
# make bench-fidelity (the database engine). An in-memory database, so every
# page the engine holds is heap memory and the run does not wait on the disk:
# two tables filled in transactions (ROWS orders, ROWS/10 customers), indexes
# built afterwards, joins and aggregates, updates, deletes and a VACUUM-free
# rebuild of an index. Deterministic: the data comes from arithmetic on the
# row number, not from random().
rows=${1:?usage: sqlite.sh ROWS}
cust=$((rows / 10))
cat <<SQL
PRAGMA cache_size = -65536;
CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, qty INTEGER,
  price REAL, note TEXT);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $cust)
INSERT INTO customer SELECT i, 'customer-' || i, 'city-' || (i * 7919 % 97),
  20000101 + i % 3650 FROM n;
COMMIT;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows / 2)
INSERT INTO orders SELECT i, 1 + i * 104729 % $cust, 'item-' || (i * 31 % 1000),
  1 + i % 17, (i * 37 % 10000) / 100.0, substr(hex(i * 2654435761), 1, 4 + i % 40) FROM n;
COMMIT;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT $rows / 2 + 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO orders SELECT i, 1 + i * 104729 % $cust, 'item-' || (i * 31 % 1000),
  1 + i % 17, (i * 37 % 10000) / 100.0, substr(hex(i * 2654435761), 1, 4 + i % 40) FROM n;
COMMIT;
CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_item ON orders(item, qty);
CREATE INDEX customer_city ON customer(city);
SELECT c.city, count(*), sum(o.qty * o.price) FROM orders o JOIN customer c ON c.id = o.customer
  GROUP BY c.city ORDER BY 3 DESC LIMIT 5;
SELECT item, avg(price), max(qty) FROM orders GROUP BY item ORDER BY 2 DESC LIMIT 5;
SELECT c.name, count(*) AS n FROM customer c JOIN orders o ON o.customer = c.id
  WHERE c.city IN ('city-1', 'city-2', 'city-3') GROUP BY c.id ORDER BY n DESC, c.name LIMIT 5;
SELECT count(DISTINCT note) FROM orders;
SELECT group_concat(name, ',') IS NOT NULL FROM (SELECT name FROM customer ORDER BY since, name);
BEGIN;
UPDATE orders SET price = price * 1.1, note = note || '-upd' WHERE qty > 12;
DELETE FROM orders WHERE id % 5 = 0;
UPDATE customer SET city = 'city-moved' WHERE id % 11 = 0;
COMMIT;
REINDEX orders_item;
SELECT count(*), sum(qty), round(sum(price), 2) FROM orders;
SELECT o.item, count(*) FROM orders o JOIN customer c ON c.id = o.customer
  WHERE c.city = 'city-moved' GROUP BY o.item ORDER BY 2 DESC, 1 LIMIT 3;
SQL
