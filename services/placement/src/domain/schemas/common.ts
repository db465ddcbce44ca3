/** Patterns shared by Placement's request schemas (placement/schemas/common.py). */
export const UUID_PATTERN = '^[0-9a-fA-F-]{36}$';
export const RC_PATTERN = '^[A-Z0-9_]+$';
export const CUSTOM_RC_PATTERN = '^CUSTOM_[A-Z0-9_]+$';
export const CUSTOM_TRAIT_PATTERN = CUSTOM_RC_PATTERN;
export const CONSUMER_TYPE_PATTERN = RC_PATTERN;
export const CONSUMER_TYPE_GET_PATTERN = '^[A-Z0-9_]+$|^all|^unknown$';
export const MAX_INT = 2147483647;
export const SQL_SP_FLOAT_MAX = 3.40282e38;
