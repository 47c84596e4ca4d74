-- The full-text search study's data (fts.toml; FY2017 chapter 7 with what Debian ships: pg_trgm): 200,000
-- video records as jsonb (title and description made of words of a fixed vocabulary), and the functions
-- the pgbench scripts call. The random words are seeded: the data is the same each time it is made.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
-- Run in one transaction (psql -1): a failure leaves nothing half made; setup.sh vacuums afterwards.
SET client_min_messages = warning;
DROP TABLE IF EXISTS videos, words;
CREATE TABLE words (id int PRIMARY KEY, word text NOT NULL);
INSERT INTO words
SELECT row_number() OVER (), w FROM unnest(string_to_array(
    'account action active actor advice airport almost amount animal answer anyone apple around arrive '
    'article artist autumn balance banana basket battle beach beauty bedroom belief better bicycle birthday '
    'blanket border bottle bottom bread breakfast bridge bright brother budget button camera campaign candle '
    'canvas capital carbon career carpet castle cattle ceiling center chapter cheese cherry chicken choice '
    'circle climate clinic closet cloud coffee collar colony column comedy comfort common concert copper '
    'corner cotton county cousin credit crystal culture curry custom damage dancer danger debate decade '
    'degree desert design detail dinner doctor dollar domain double dragon drawer driver editor effort '
    'election empire energy engine escape evening expert fabric factor family farmer father feather festival '
    'figure finger flavor flight flower forest fortune friend future galaxy garden garlic gender ginger '
    'glass global golden guitar hammer harbor health heaven height helmet history holiday honey horizon '
    'hospital hunter island jacket jungle kettle kitchen ladder laptop launch lawyer leader lemon lesson '
    'letter library light liquid lizard lobster locker market master meadow medal memory method middle '
    'minute mirror mobile moment monkey morning mother motion mountain museum muscle mystery napkin nature '
    'needle number object ocean office orange orchid oxygen packet palace panel parade parent parrot pastry '
    'pencil pepper person picnic pigeon pillow planet plastic player pocket poetry potato powder prison '
    'problem profit puzzle rabbit racket radio random reason record recipe region remote report rescue '
    'ribbon rocket rubber saddle salmon sample school screen season secret senior shadow shelter silver '
    'singer sister sketch soccer socket spirit spring square stable statue studio summer sunset supply '
    'surface symbol system tablet talent teacher temple tennis theory thread ticket timber tomato tongue '
    'tourist tower traffic travel treaty tunnel turtle uncle valley vector velvet victory village violin '
    'volume voyage wallet walnut window winter wizard wonder yellow zebra', ' ')) AS w;
-- the vocabulary as an array, folded into each calling query once (IMMUTABLE): a word drawn costs an index
CREATE OR REPLACE FUNCTION vocabulary() RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(word ORDER BY id) FROM words
$$;
-- n words drawn at random (with repetition) from the 281 of the vocabulary
CREATE OR REPLACE FUNCTION random_words(n int) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT string_agg((vocabulary())[1 + floor(random() * 281)::int], ' ') FROM generate_series(1, n)
$$;
CREATE OR REPLACE FUNCTION video_record() RETURNS jsonb LANGUAGE sql VOLATILE AS $$
    SELECT jsonb_build_object('title', random_words(4), 'description', random_words(24),
                              'category', (ARRAY['music', 'game', 'cooking', 'travel', 'science'])[1 + floor(random() * 5)::int],
                              'length', floor(60 + random() * 1200)::int, 'watch_num', floor(random() * 200000)::int)
$$;
CREATE TABLE videos (id bigserial PRIMARY KEY, record jsonb NOT NULL);
SELECT setseed(0.2017) AS seeded \gset
INSERT INTO videos (record) SELECT video_record() FROM generate_series(1, 200000);
