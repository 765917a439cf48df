"""The docpipe subcommands that are not surfaces of their own (extract, serve, train): each has add_arguments(parser) and run(args)."""
