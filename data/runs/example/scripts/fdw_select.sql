-- FY2017 chapter 9.3.2.2: a customer's name and age (addrbook) and the balance of their account
-- (pgbench_accounts), local or foreign tables by database
\set id random(1, 100000)
SELECT ad.name, ad.age, ac.abalance FROM addrbook ad, pgbench_accounts ac WHERE ad.id = :id AND ad.id = ac.aid;
