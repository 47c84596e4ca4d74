-- Analytic queries of the parallel-query study (parallel.toml), over pgbench's tables at scale 20
-- (pgbench_accounts: 2,000,000 rows). tools/collect queries runs each one by one; '-- query: ID' names it.

-- query: q1
SELECT count(*) FROM pgbench_accounts WHERE abalance <> 0 OR filler LIKE '%x%';

-- query: q2
SELECT bid, count(*), sum(abalance), avg(abalance) FROM pgbench_accounts GROUP BY bid ORDER BY bid;

-- query: q3
SELECT b.bid, sum(a.abalance) AS balance, count(*) AS accounts
  FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid
 GROUP BY b.bid ORDER BY balance DESC;

-- query: q4
SELECT aid, abalance FROM pgbench_accounts WHERE aid % 97 = 0 ORDER BY abalance DESC, aid LIMIT 100;

-- query: q5
SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY abalance) FROM pgbench_accounts WHERE bid % 2 = 0;
