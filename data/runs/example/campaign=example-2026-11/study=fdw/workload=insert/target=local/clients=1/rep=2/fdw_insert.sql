-- FY2017 chapter 9.3.4.2: a row of the transaction history inserted
\set tid random(1, 10)
\set aid random(1, 100000)
\set delta random(-999999, 999999)
INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (:tid, 1, :aid, :delta);
