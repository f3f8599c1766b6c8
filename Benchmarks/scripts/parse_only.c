/* parse_only.c -- lower bound for `badgeflow filter`: json-c parsing alone.
 *
 * Reads NDJSON on stdin with getline, parses each non-blank line with one
 * reused json_tokener (json_tokener_reset between lines), releases the object
 * with json_object_put, and prints "ok=N bad=M" on stdout at the end. A line is
 * bad when json-c fails, wants more input (truncated), or stops before the end
 * of the line (trailing garbage). Single-threaded, no output per line.
 *
 * With --strict, the tokener gets the flags BadgeFlow parses with
 * (JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8), to show what they cost.
 *
 * Build: cc -O2 parse_only.c $(pkg-config --cflags --libs json-c) -o parse_only
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    json_tokener *tok = json_tokener_new();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long ok = 0, bad = 0;

    if (tok == NULL) {
        fputs("parse_only: out of memory\n", stderr);
        return 4;
    }
    if (argc > 1 && strcmp(argv[1], "--strict") == 0)
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    while ((len = getline(&line, &cap, stdin)) != -1) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                           line[len - 1] == ' ' || line[len - 1] == '\t'))
            len--;
        if (len == 0)
            continue; /* blank lines are skipped, as the filter does */
        json_object *obj = json_tokener_parse_ex(tok, line, (int)len);
        if (obj != NULL && json_tokener_get_error(tok) == json_tokener_success &&
            json_tokener_get_parse_end(tok) == (size_t)len)
            ok++;
        else
            bad++;
        json_object_put(obj); /* NULL-safe */
        json_tokener_reset(tok);
    }
    if (ferror(stdin)) {
        perror("parse_only: stdin");
        return 4;
    }
    free(line);
    json_tokener_free(tok);
    printf("ok=%lu bad=%lu\n", ok, bad);
    return 0;
}
