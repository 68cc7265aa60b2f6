package io.statehouse.claims;

/**
 * What one claim competes for: version {@code number} of a state {@code id}, slot {@code number}
 * of a lock {@code id}.
 *
 * @param id the state or lock id
 * @param number the version or slot
 */
public record ClaimKey(String id, long number) {
}
