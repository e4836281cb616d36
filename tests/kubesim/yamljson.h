/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim YAML/JSON loader — turns manifest files into cJSON documents.
 *
 * YAML goes through libyaml's document API (multi-document streams, anchors
 * and aliases, YAML 1.1 plain-scalar typing as sigs.k8s.io/yaml does: null,
 * booleans incl. yes/no/on/off, integers, floats; quoted scalars stay
 * strings). Files whose first non-blank byte is '{' or '[' are parsed as JSON.
 * Standalone (libyaml + cJSON only).
 */
#ifndef KUBESIM_YAMLJSON_H
#define KUBESIM_YAMLJSON_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Parse a YAML stream; returns a cJSON array with one element per non-empty
 * document, or NULL with a message ("line N: ...") in err. */
cJSON *yj_parse_yaml(const char *buf, size_t len, char *err, size_t errlen);
/* Read a file (YAML or JSON); returns an array of documents like above. */
cJSON *yj_load_file(const char *path, char *err, size_t errlen);

#endif
