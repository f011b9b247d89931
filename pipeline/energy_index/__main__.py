from energy_index.cli import main

main()
