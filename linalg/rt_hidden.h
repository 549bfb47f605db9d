/* rt_hidden.h: RT_INTERNAL marks a function or object that the library's own files share
 * across files (its name stap_*, as every global name of librtstap.a) but that no installed
 * header declares: hidden, so that librtstap.so does not export it (cmake/rtstap.map exports
 * stap_*; CTest check_symbols holds both libraries to it, docs/library.md "Names and
 * options"). */
#ifndef RT_HIDDEN_H
#define RT_HIDDEN_H

#define RT_INTERNAL __attribute__((visibility("hidden")))

#endif
