-- The FDW study's customer table (fdw.toml; FY2017 chapter 9.2.3.1's addrbook), 100,000 rows, one per
-- account of pgbench's scale 1 (the same id). Every value is computed from the id.
-- Run in one transaction (psql -1): a failure leaves nothing half made; setup.sh vacuums afterwards.
SET client_min_messages = warning;
DROP TABLE IF EXISTS addrbook;
CREATE TABLE addrbook (
    id          bigint PRIMARY KEY,
    name        character varying(32),
    kana        character varying(32),
    email       character varying(64),
    gender      character(1),
    age         integer,
    birthday    date,
    marriage    character(2),
    blood_type  character(3),
    division    character varying(4),
    phone_no    character varying(12),
    mobile_no   character varying(13),
    carrier     character varying(10),
    note        text
);
INSERT INTO addrbook
SELECT i, 'name-' || i, 'kana-' || i, 'user' || i || '@example.com', CASE WHEN i % 2 = 0 THEN 'F' ELSE 'M' END,
       20 + i % 60, date '1950-01-01' + (i * 37) % 20000, CASE WHEN i % 3 = 0 THEN 'no' ELSE 'ye' END,
       (ARRAY['A', 'B', 'O', 'AB'])[1 + i % 4], lpad((i % 47)::text, 4, '0'), lpad((i * 7)::text, 12, '0'),
       lpad((i * 13)::text, 13, '0'), (ARRAY['docomo', 'au', 'softbank'])[1 + i % 3], md5(i::text)
FROM generate_series(1, 100000) AS i;
