-- +goose Up
-- One row per saved run. Times are Unix microseconds (UTC); config, host and
-- result are JSON text, kept byte for byte as wirebench wrote them.
CREATE TABLE runs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    saved_at   INTEGER NOT NULL,
    version    TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    config     TEXT    NOT NULL,
    host       TEXT    NOT NULL,
    result     TEXT    NOT NULL
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE INDEX runs_kind_started_at ON runs (kind, started_at);

CREATE TABLE run_labels (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_labels_key_value ON run_labels (key, value);

-- +goose Down
DROP TABLE run_labels;
DROP TABLE runs;
