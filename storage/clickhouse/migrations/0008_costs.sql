-- Project-level LLM token prices (/cost/create). Default prices are not
-- stored: they ship with the binary (package pricing). Costs are USD per
-- token; pricing_level_id is the project id. Queries read it without FINAL,
-- so it is a plain MergeTree and purge is a lightweight DELETE.
CREATE TABLE IF NOT EXISTS llm_token_prices (
    id                              String,
    pricing_level                   LowCardinality(String),
    pricing_level_id                String,
    provider_id                     LowCardinality(String),
    llm_id                          String,
    effective_date                  DateTime64(6, 'UTC'),
    prompt_token_cost               Float64,
    completion_token_cost           Float64,
    cache_read_input_token_cost     Float64 DEFAULT 0,
    cache_creation_input_token_cost Float64 DEFAULT 0,
    prompt_token_cost_unit          LowCardinality(String),
    completion_token_cost_unit      LowCardinality(String),
    created_by                      String,
    created_at                      DateTime64(6, 'UTC')
)
ENGINE = MergeTree
ORDER BY (pricing_level, pricing_level_id, llm_id, effective_date, id);
