-- SQLite workload for bench/run: builds its data with recursive CTEs
-- (deterministic arithmetic, no random()), then indexes, aggregates, joins,
-- sorts and string functions. Output is checked across runners.
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE item(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, price REAL, qty INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000)
INSERT INTO item SELECT i, (i * 7919) % 1000, printf('item-%06d-%x', i, (i * 2654435761) % 4294967296),
                        ((i * 48271) % 100000) / 100.0, (i * 16807) % 97 FROM n;
CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
INSERT INTO grp SELECT i, 'group ' || i FROM n;
CREATE INDEX item_grp ON item(grp, price);
CREATE INDEX item_name ON item(name);
SELECT count(*), sum(qty), round(avg(price), 4) FROM item;
SELECT grp, count(*), round(sum(price * qty), 2) FROM item GROUP BY grp ORDER BY 3 DESC LIMIT 5;
SELECT g.label, count(*) FROM item i JOIN grp g ON g.id = i.grp
 WHERE i.price BETWEEN 100 AND 200 GROUP BY g.id ORDER BY 2 DESC, 1 LIMIT 5;
SELECT count(*) FROM item WHERE name LIKE '%-0%ab%';
SELECT substr(name, 6, 6), upper(name) FROM item ORDER BY name DESC LIMIT 3;
UPDATE item SET price = price * 1.1 WHERE qty % 5 = 0;
DELETE FROM item WHERE qty = 13;
SELECT count(*), round(sum(price), 2) FROM item;
SELECT a.grp, count(*) FROM item a WHERE a.price > (SELECT avg(b.price) FROM item b WHERE b.grp = a.grp)
 GROUP BY a.grp ORDER BY a.grp LIMIT 5;
SELECT qty, count(*), group_concat(id % 10, '') FROM (SELECT * FROM item ORDER BY price LIMIT 2000) GROUP BY qty ORDER BY qty LIMIT 4;
