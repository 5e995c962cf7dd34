create table t(a integer primary key, b text, c real);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 20000)
insert into t select x, printf('%08d-%s', x, hex(x * 7919)), (x * 37) % 1000 / 10.0 from n;
create index tb on t(b);
select count(*), sum(length(b)), avg(c) from t;
select b, c from t where c > 99.5 order by b desc limit 3;
update t set c = c * 2 where a % 3 = 0;
delete from t where a % 5 = 0;
select count(*), max(c) from t group by a % 10 order by 1 limit 3;
