-- +goose Up
-- One row per saved run. config, host and result are json (not jsonb), so a
-- document comes back byte for byte as wirebench wrote it.
CREATE TABLE runs (
    id         BIGSERIAL   PRIMARY KEY,
    kind       TEXT        NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    saved_at   TIMESTAMPTZ NOT NULL,
    version    TEXT        NOT NULL,
    target     TEXT        NOT NULL,
    summary    TEXT        NOT NULL,
    config     JSON        NOT NULL,
    host       JSON        NOT NULL,
    result     JSON        NOT NULL
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE INDEX runs_kind_started_at ON runs (kind, started_at);

CREATE TABLE run_labels (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT   NOT NULL,
    value  TEXT   NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_labels_key_value ON run_labels (key, value);

-- +goose Down
DROP TABLE run_labels;
DROP TABLE runs;
