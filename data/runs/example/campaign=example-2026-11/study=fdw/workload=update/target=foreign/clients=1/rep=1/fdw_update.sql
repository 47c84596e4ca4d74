-- FY2017 chapter 9.3.3.2: an account's balance changed
\set delta random(-999999, 999999)
\set aid random(1, 100000)
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
