"""Dutch (Nederlands), addressing the player with "je"."""

from __future__ import annotations

from typing import Final

from .catalog import Cards, Errors, Hints, Rules, Slots, Texts

TEXTS: Final = Texts(
    errors=Errors(
        bad_message="De server begreep dat bericht niet.",
        too_large="Dat bericht is te groot.",
        rate_limited="Doe even wat rustiger aan.",
        room_not_found="Er is geen kamer met die code.",
        room_full="Deze kamer is vol (8 spelers).",
        name_taken="Iemand in deze kamer heeft die naam al.",
        bad_name="Een naam heeft 1 tot 20 tekens, zonder stuurtekens.",
        bad_token="Je plaats is niet gevonden: doe opnieuw mee.",
        not_host="Alleen de host kan dat doen.",
        game_running="Het spel is al begonnen: je kunt meekijken.",
        not_in_room="Ga eerst een kamer binnen.",
        already_in_room="Je zit op deze verbinding al in een kamer.",
        not_seated="Toeschouwers kunnen alleen kijken.",
        wrong_phase="Dat kan op dit moment van het spel niet.",
        not_enough_players="Een spel heeft 2 tot 8 spelers nodig.",
        no_such_seat="Die plaats bestaat niet.",
        already_seated="Je hebt al een plaats in deze kamer.",
        bad_reaction="Die reactie is niet beschikbaar.",
        unavailable="De server kan het spel nu niet opslaan: dat is niet gebeurd. Probeer het opnieuw als het spel "
        "verdergaat.",
        not_a_bot="Op die plaats zit geen computerspeler.",
        no_hints="Tips zijn er alleen in oefenspellen tegen de computer.",
        nothing_to_hint="Er valt nu niets te beslissen: wacht op je beurt.",
    ),
    rules=Rules(
        round_over="De ronde is voorbij.",
        not_your_turn="Je bent niet aan de beurt.",
        too_early="Even wachten: de vorige speler mag nog Crisp roepen.",
        already_drawn="Je hebt deze beurt al een kaart getrokken.",
        nothing_drawn="Trek eerst een kaart.",
        discard_draw_disabled="Trekken van de aflegstapel staat in deze kamer uit.",
        discard_empty="De aflegstapel is leeg.",
        face_card_from_deck="Een boer, vrouw of heer van de trekstapel mag niet in je hand.",
        must_swap="Een kaart van de aflegstapel moet je ruilen met een kaart uit je hand.",
        king_must_be_played="Een heer van de trekstapel moet je spelen.",
        wrong_card="Dat kan je getrokken kaart niet.",
        bad_target="Kies een kaart van een andere speler.",
        crisp_not_allowed="Je kunt nu geen Crisp roepen.",
    ),
    unavailable="De server kan het spel nu niet opslaan. Het gaat vanzelf verder zodra dat kan: blijf hier.",
    hints=Hints(
        draw_only="Trek een kaart van de trekstapel.",
        draw="Trek van de trekstapel: de aflegstapel helpt je nu niet.",
        draw_known="Trek van de trekstapel: je weet dat de bovenste kaart {card} is.",
        take="Pak {card} van de aflegstapel in ruil voor je {slot} (die is waarschijnlijk ongeveer {about} waard).",
        take_known="Pak {card} van de aflegstapel in ruil voor je {slot}, {old}.",
        swap="Ruil: je {slot} is waarschijnlijk hoger dan {card}.",
        swap_known="Ruil: je {slot} is {old}, hoger dan {card}.",
        must_swap="Ruil hem om voor je {slot}: een kaart van de aflegstapel moet je houden.",
        discard="Leg hem af: {card} zou je totaal niet lager maken.",
        jack="Boer: bekijk je middelste kaart, die ken je nog niet.",
        jack_known="Leg de boer af: je middelste kaart ken je al.",
        queen="Vrouw: geef je {slot} in ruil voor de {their_slot} van {player} (waarschijnlijk ongeveer {about} "
        "waard).",
        queen_none="Leg de vrouw af: geen enkele ruil helpt je waarschijnlijk.",
        king="Heer: die moet je spelen, en je krijgt er twee extra zetten bij.",
        crisp="Roep Crisp: je totaal is ongeveer {sum}, waarschijnlijk het laagste ({chance}%).",
        no_crisp="Roep nog geen Crisp: je totaal is ongeveer {sum}, en de kans dat dat het laagste is, is maar "
        "{chance}%.",
    ),
    cards=Cards(
        ace="de aas",
        two="de 2",
        three="de 3",
        four="de 4",
        five="de 5",
        six="de 6",
        seven="de 7",
        eight="de 8",
        nine="de 9",
        ten="de 10",
        jack="de boer",
        queen="de vrouw",
        king="de heer",
    ),
    slots=Slots(left="linkerkaart", middle="middelste kaart", right="rechterkaart"),
)
