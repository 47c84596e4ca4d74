-- The full-text search study's insert load: one new video record (4 title words, 24 description words)
INSERT INTO videos (record) VALUES (video_record());
