-- What an ANN index gives recall on PostgreSQL: 1M random 256-dimension
-- vectors in one table, an IVFFlat index (pgvector), and the time of a k=5
-- cosine search with the index (probes = 10, 50, 200) against the exact scan, with the
-- share of the exact top 5 the index finds. Run with psql on a server that has
-- pgvector (see docs/benchmarks.md#memory):
--   psql -X -f benches/pgvector_ann.sql
\timing off
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
DROP TABLE IF EXISTS ann_bench;
CREATE TABLE ann_bench (id BIGINT PRIMARY KEY, embedding vector(256) NOT NULL);
SELECT setseed(0.42);
INSERT INTO ann_bench
SELECT i, (SELECT array_agg(random() - 0.5 + 0 * g) FROM generate_series(1, 256) g WHERE i > 0)::vector
FROM generate_series(1, 1000000) i;
SET maintenance_work_mem = '1GB';
\timing on
CREATE INDEX ann_bench_ivf ON ann_bench USING ivfflat (embedding vector_cosine_ops) WITH (lists = 1000);
\timing off
ANALYZE ann_bench;
CREATE TEMP TABLE queries AS
SELECT q, (SELECT array_agg(random() - 0.5 + 0 * g) FROM generate_series(1, 256) g WHERE q > 0)::vector AS v
FROM generate_series(1, 30) q;
CREATE OR REPLACE FUNCTION ann_bench_time(probes INT, exact BOOLEAN)
RETURNS TABLE (q INT, ms FLOAT8, ids BIGINT[]) LANGUAGE plpgsql AS $$
DECLARE r RECORD; t0 TIMESTAMPTZ; found BIGINT[];
BEGIN
  PERFORM set_config('ivfflat.probes', probes::TEXT, true);
  PERFORM set_config('enable_indexscan', (NOT exact)::TEXT, true);
  FOR r IN SELECT * FROM queries ORDER BY 1 LOOP
    t0 := clock_timestamp();
    -- EXECUTE plans each query afresh: a cached plan from the exact pass
    -- (index scans off) would otherwise be reused by the indexed pass.
    EXECUTE 'SELECT array_agg(id) FROM
      (SELECT id FROM ann_bench ORDER BY embedding <=> $1 LIMIT 5) s'
      INTO found USING r.v;
    q := r.q; ms := EXTRACT(EPOCH FROM clock_timestamp() - t0) * 1000; ids := found;
    RETURN NEXT;
  END LOOP;
END $$;
CREATE TEMP TABLE exact AS SELECT * FROM ann_bench_time(10, true);
CREATE TEMP TABLE indexed AS SELECT * FROM ann_bench_time(10, false);
CREATE TEMP TABLE indexed50 AS SELECT * FROM ann_bench_time(50, false);
CREATE TEMP TABLE indexed200 AS SELECT * FROM ann_bench_time(200, false);
SELECT 'exact scan' AS search,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50_ms,
       1.0 AS recall_at_5
FROM exact
UNION ALL
SELECT 'ivfflat lists=1000 probes=10',
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms),
       avg((SELECT count(*) FROM unnest(i.ids) x WHERE x = ANY (e.ids)) / 5.0)
FROM indexed i JOIN exact e USING (q)
UNION ALL
SELECT 'ivfflat lists=1000 probes=50',
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms),
       avg((SELECT count(*) FROM unnest(i.ids) x WHERE x = ANY (e.ids)) / 5.0)
FROM indexed50 i JOIN exact e USING (q)
UNION ALL
SELECT 'ivfflat lists=1000 probes=200',
       percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms),
       avg((SELECT count(*) FROM unnest(i.ids) x WHERE x = ANY (e.ids)) / 5.0)
FROM indexed200 i JOIN exact e USING (q);
DROP FUNCTION ann_bench_time(INT, BOOLEAN);
DROP TABLE ann_bench;
