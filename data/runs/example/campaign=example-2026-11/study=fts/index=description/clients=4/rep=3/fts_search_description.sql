-- The full-text search study's search in the description: the records whose description holds one random word of the
-- vocabulary (FY2017 chapter 7.3.5's LIKE '%word%' query)
\set w random(1, 281)
SELECT count(*) FROM videos WHERE (record->>'description') LIKE '%' || (SELECT word FROM words WHERE id = :w) || '%';
