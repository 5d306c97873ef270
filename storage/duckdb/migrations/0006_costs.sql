-- Project-level LLM token prices (/cost/create). Default prices are not
-- stored: they ship with the binary (package pricing). Costs are USD per
-- token; pricing_level_id is the project id.
CREATE TABLE IF NOT EXISTS llm_token_prices (
    id                              VARCHAR   NOT NULL,
    pricing_level                   VARCHAR   NOT NULL,
    pricing_level_id                VARCHAR   NOT NULL,
    provider_id                     VARCHAR   NOT NULL,
    llm_id                          VARCHAR   NOT NULL,
    effective_date                  TIMESTAMP NOT NULL,
    prompt_token_cost               DOUBLE    NOT NULL,
    completion_token_cost           DOUBLE    NOT NULL,
    cache_read_input_token_cost     DOUBLE    NOT NULL DEFAULT 0,
    cache_creation_input_token_cost DOUBLE    NOT NULL DEFAULT 0,
    prompt_token_cost_unit          VARCHAR   NOT NULL,
    completion_token_cost_unit      VARCHAR   NOT NULL,
    created_by                      VARCHAR   NOT NULL,
    created_at                      TIMESTAMP NOT NULL,
    PRIMARY KEY (pricing_level_id, id)
);
