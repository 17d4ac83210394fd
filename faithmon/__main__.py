from faithmon.cli import main

main()
