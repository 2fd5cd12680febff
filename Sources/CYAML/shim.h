#ifndef USHER_CYAML_SHIM_H
#define USHER_CYAML_SHIM_H
#include <yaml.h>
#endif
