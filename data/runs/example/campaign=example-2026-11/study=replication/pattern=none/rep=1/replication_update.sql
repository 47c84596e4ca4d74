\set naccounts 100000 * :scale
\set aid random(1, :naccounts)
UPDATE pgbench_accounts
  SET filler = repeat(md5(clock_timestamp()::text),2)
  WHERE aid = :aid;
